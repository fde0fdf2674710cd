// Recursion for the instruction counts against callgrind (instructions_test): Ackermann's
// function, two functions that call each other, and a tree built and summed recursively.
#include <stdio.h>
#include <stdlib.h>

static long ackermann(long m, long n) {
  if (m == 0) return n + 1;
  if (n == 0) return ackermann(m - 1, 1);
  return ackermann(m - 1, ackermann(m, n - 1));
}

static int is_odd(unsigned n);
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

struct node {
  struct node *left, *right;
  int value;
};

static struct node* build(int depth, int value) {
  struct node* n = malloc(sizeof *n);
  n->value = value;
  n->left = depth > 0 ? build(depth - 1, 2 * value) : NULL;
  n->right = depth > 0 ? build(depth - 1, 2 * value + 1) : NULL;
  return n;
}

static long sum(const struct node* n) {
  if (!n) return 0;
  return n->value + sum(n->left) + sum(n->right);
}

static void release(struct node* n) {
  if (!n) return;
  release(n->left);
  release(n->right);
  free(n);
}

int main(void) {
  long evens = 0;
  for (unsigned i = 0; i < 3000; i++) evens += is_even(i);
  struct node* tree = build(14, 1);
  printf("%ld %ld %ld\n", ackermann(2, 300), evens, sum(tree));
  release(tree);
  return 0;
}
