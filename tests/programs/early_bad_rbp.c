/* Waits for the thread its library started before main (early_bad_rbp_lib.c). */
void join_early(void);

int main(void) {
  join_early();
  return 0;
}
