/* is_even(n) and is_odd(n) call each other n times in all: for n = 1000, is_even is called 501
 * times and is_odd 500 times (is_even(1000) → is_odd(999) → … → is_even(0)). */
#include <stdio.h>

int is_odd(int n);
int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }
int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }

int main(void) {
  printf("%d\n", is_even(1000));
  return 0;
}
