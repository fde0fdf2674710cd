/* The demo program for `make demo`: counts word frequencies in generated text, sorts them, and
 * checks primes, so that time splits over a few functions, one of them inside libc (qsort). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SIZE 65536

struct entry {
  char word[16];
  int count;
};

static struct entry table[TABLE_SIZE];

static unsigned hash_word(const char *w) {
  unsigned h = 2166136261u;
  for (; *w; ++w) h = (h ^ (unsigned char)*w) * 16777619u;
  return h;
}

static void count_word(const char *w) {
  unsigned i = hash_word(w) & (TABLE_SIZE - 1);
  while (table[i].count && strcmp(table[i].word, w) != 0) i = (i + 1) & (TABLE_SIZE - 1);
  if (!table[i].count) strncpy(table[i].word, w, sizeof table[i].word - 1);
  table[i].count++;
}

static void generate_and_count(int words, unsigned seed) {
  char w[16];
  for (int n = 0; n < words; ++n) {
    int len = 3 + (int)(seed % 5);
    for (int k = 0; k < len; ++k) {
      seed = seed * 1103515245u + 12345u;
      w[k] = (char)('a' + (seed >> 16) % 4);
    }
    w[len] = '\0';
    count_word(w);
  }
}

static int by_count(const void *a, const void *b) {
  const struct entry *x = a, *y = b;
  if (x->count != y->count) return y->count - x->count;
  return strcmp(x->word, y->word);
}

static int is_prime(int n) {
  if (n < 2) return 0;
  for (int d = 2; d * d <= n; ++d)
    if (n % d == 0) return 0;
  return 1;
}

static int count_primes(int limit) {
  int found = 0;
  for (int n = 0; n < limit; ++n) found += is_prime(n);
  return found;
}

int main(void) {
  generate_and_count(6000000, 42);
  for (int round = 0; round < 40; ++round) qsort(table, TABLE_SIZE, sizeof table[0], by_count);
  int primes = count_primes(1500000);
  printf("most frequent: %s (%d times); %d primes below 1500000\n", table[0].word, table[0].count,
         primes);
  return 0;
}
