/* Functions of known complexity, for complexity_test.cc. Built with -finstrument-functions; the
 * measured functions are the traced ones, their helpers are not instrumented, so each call's
 * time is its work and not the tracer's.
 *
 *   complexity_prog api              every function over its own range of sizes, each call
 *                                    tagged with hotline_size(n) (nine calls per size); and
 *                                    noisy_scan, whose random spin dwarfs its work
 *   complexity_prog poly N           one run for hotline sweep: each polynomial/log/constant
 *                                    function once, at a size proportional to N
 *   complexity_prog subsets N        one run for hotline sweep: subset enumeration over N items
 *
 * Every function returns a number printed at the end, so the compiler keeps the work. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotline/hotline.h"

#define QUIET __attribute__((no_instrument_function, noinline))
#define MEASURED __attribute__((noinline))

static int tag_sizes; /* api mode: hotline_size() in every measured function */
static uint64_t sink;

static uint64_t lcg = 12345;
QUIET static uint32_t next_random(void) {
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(lcg >> 33);
}

/* O(n): a rolling hash of the elements. Each step waits for the last (a multiply), so the time
 * per element is the same whether the array is in the first-level cache or not. */
MEASURED uint64_t linear_scan(const int* a, size_t n, int key) {
  if (tag_sizes) hotline_size(n);
  uint64_t h = (uint64_t)key;
  for (size_t i = 0; i < n; ++i) h = h * 1099511628211ull + (uint64_t)a[i];
  return h;
}

/* Branch-free: every step costs the same, whether the keys' pattern can be learnt by the branch
 * predictor (small n) or not. */
QUIET static size_t lower_bound(const uint16_t* a, size_t n, unsigned key) {
  const uint16_t* base = a;
  while (n > 1) {
    size_t half = n / 2;
    base += (size_t)(base[half - 1] < key) * half; /* no branch to predict */
    n -= half;
  }
  return (size_t)(base - a) + (size_t)(*base < key);
}

/* O(log n): 1024 binary searches in a sorted array of n 16-bit numbers (up to 16384 of them
 * stay within the first-level cache). */
MEASURED uint64_t binary_search(const uint16_t* a, size_t n) {
  if (tag_sizes) hotline_size(n);
  uint64_t sum = 0;
  for (int i = 0; i < 1024; ++i)
    sum += lower_bound(a, n, (unsigned)(((uint64_t)i * 2654435761u) % (2 * n)));
  return sum;
}

/* Merges a[lo, mid) and a[mid, hi) into out[lo, hi). */
QUIET static void merge_runs(const int* a, int* out, size_t lo, size_t mid, size_t hi) {
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) out[k++] = a[i] <= a[j] ? a[i++] : a[j++];
  while (i < mid) out[k++] = a[i++];
  while (j < hi) out[k++] = a[j++];
}

/* O(n log n): bottom-up merge sort, log₂ n passes of n element moves each (no recursion, whose
 * calls would add a cost per element of their own). */
MEASURED uint64_t merge_sort(int* a, int* tmp, size_t n) {
  if (tag_sizes) hotline_size(n);
  int* from = a;
  int* to = tmp;
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n;
      size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      merge_runs(from, to, lo, mid, hi);
    }
    int* swap = from;
    from = to;
    to = swap;
  }
  return (uint64_t)from[n / 2];
}

/* O(n²) on reversed input: every element moves past every earlier one. */
MEASURED uint64_t insertion_sort(int* a, size_t n) {
  if (tag_sizes) hotline_size(n);
  for (size_t i = 1; i < n; ++i) {
    int v = a[i];
    size_t j = i;
    while (j > 0 && a[j - 1] > v) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = v;
  }
  return (uint64_t)a[0];
}

/* O(n³): naive 3SUM, every triple (i, j, k) of the array tried. Its data stays small (n ints),
 * so the time per triple is the same at every n. */
MEASURED uint64_t triple_loop(const int* a, size_t n) {
  if (tag_sizes) hotline_size(n);
  uint64_t zero = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      for (size_t k = 0; k < n; ++k) zero += a[i] + a[j] + a[k] == 0;
  return zero;
}

/* O(2ⁿ): every subset of n items, in Gray-code order (one item in or out per step), counting
 * those whose sum is a multiple of 7. */
MEASURED uint64_t subset_sums(const int* items, size_t n) {
  if (tag_sizes) hotline_size(n);
  uint64_t count = 1;
  int64_t sum = 0;
  uint64_t subsets = (uint64_t)1 << n;
  for (uint64_t g = 1; g < subsets; ++g) {
    int bit = __builtin_ctzll(g);
    uint64_t gray = g ^ (g >> 1);
    sum += (gray >> bit) & 1 ? items[bit] : -items[bit];
    count += sum % 7 == 0;
  }
  return count;
}

/* O(1): 4096 lookups of the same 16 keys in an open-addressing table of n slots (kept in cache,
 * so the table's size changes nothing). */
#define EMPTY_SLOT UINT32_MAX
MEASURED uint64_t hash_lookups(const uint32_t* table, size_t n) {
  if (tag_sizes) hotline_size(n);
  uint64_t found = 0;
  for (int i = 0; i < 4096; ++i) {
    uint32_t key = (uint32_t)(i % 16) * 40503u + 1;
    size_t slot = (key * 2654435761u) & (n - 1);
    while (table[slot] != EMPTY_SLOT && table[slot] != key) slot = (slot + 1) & (n - 1);
    found += table[slot] == key;
  }
  return found;
}

QUIET static void spin(uint64_t iterations) {
  volatile uint64_t x = 0;
  for (uint64_t i = 0; i < iterations; ++i) x += i;
}

/* O(n) work under a random spin a hundred times larger: noise, on purpose. */
MEASURED uint64_t noisy_scan(const int* a, size_t n) {
  if (tag_sizes) hotline_size(n);
  spin((uint64_t)(next_random() % 1000) * 400);
  uint64_t found = 0;
  for (size_t i = 0; i < n; ++i) found += a[i] == 3;
  return found;
}

/* ---- set-up, not measured ---- */

QUIET static int* ints(size_t n, int reversed) {
  int* a = malloc(n * sizeof *a);
  for (size_t i = 0; i < n; ++i) a[i] = reversed ? (int)(n - i) : (int)(2 * i);
  return a;
}

QUIET static void run_scan(size_t n) {
  int* a = ints(n, 0);
  sink += linear_scan(a, n, 4);
  free(a);
}

QUIET static void run_search(size_t n) {
  uint16_t* a = malloc(n * sizeof *a);
  for (size_t i = 0; i < n; ++i) a[i] = (uint16_t)(2 * i);
  sink += binary_search(a, n);
  free(a);
}

QUIET static void run_merge(size_t n) {
  int* a = malloc(n * sizeof *a);
  int* tmp = malloc(n * sizeof *tmp);
  for (size_t i = 0; i < n; ++i) a[i] = (int)(next_random() % 1000000);
  memset(tmp, 0, n * sizeof *tmp); /* its pages faulted in here, not in the sort */
  sink += merge_sort(a, tmp, n);
  free(a);
  free(tmp);
}

QUIET static void run_insertion(size_t n) {
  int* a = ints(n, 1);
  sink += insertion_sort(a, n);
  free(a);
}

QUIET static void run_triple(size_t n) {
  int* a = malloc(n * sizeof *a);
  for (size_t i = 0; i < n; ++i) a[i] = (int)(i % 21) - 10;
  sink += triple_loop(a, n);
  free(a);
}

QUIET static void run_subsets(size_t n) {
  int items[64];
  for (size_t i = 0; i < n && i < 64; ++i) items[i] = (int)(i * 3 + 1);
  sink += subset_sums(items, n);
}

QUIET static void run_hash(size_t n) {
  uint32_t* table = malloc(n * sizeof *table);
  for (size_t i = 0; i < n; ++i) table[i] = EMPTY_SLOT;
  for (uint32_t i = 0; i < 16; ++i) {
    uint32_t key = i * 40503u + 1;
    size_t slot = (key * 2654435761u) & (n - 1);
    while (table[slot] != EMPTY_SLOT) slot = (slot + 1) & (n - 1);
    table[slot] = key;
  }
  sink += hash_lookups(table, n);
  free(table);
}

QUIET static void run_noisy(size_t n) {
  int* a = ints(n, 0);
  sink += noisy_scan(a, n);
  free(a);
}

typedef void (*runner)(size_t);

/* Sizes from `from` to `to`, each `factor` times the last (or `step` more when factor is 0). */
QUIET static void over(runner run, size_t from, size_t to, double factor, size_t step, int calls) {
  for (double n = (double)from; n <= (double)to * 1.001;
       n = factor > 0 ? n * factor : n + (double)step)
    for (int c = 0; c < calls; ++c) run((size_t)(n + 0.5));
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "api") == 0) {
    tag_sizes = 1;
    /* Each call under a millisecond: on a busy machine a longer one is often preempted, and
     * its elapsed time with it. Binary searches stay within the first-level cache. Insertion
     * sort starts at 64: below, its cost per element (a mispredicted loop exit) still shows
     * beside the n² of its moves. */
    over(run_scan, 1024, 65536, 2, 0, 9);
    over(run_search, 16, 16384, 2, 0, 9);
    over(run_merge, 64, 4096, 2, 0, 9);
    over(run_insertion, 64, 2048, 2, 0, 9);
    over(run_triple, 6, 69, 1.41421356, 0, 9);
    over(run_subsets, 6, 16, 0, 2, 9);
    over(run_hash, 1024, 262144, 2, 0, 9);
    over(run_noisy, 4096, 262144, 2, 0, 1);
  } else if (argc == 3 && strcmp(argv[1], "poly") == 0) {
    size_t n = strtoull(argv[2], NULL, 10);
    run_scan(n * 32);
    run_search(n * 4);
    run_merge(n * 4);
    run_insertion(n * 2);
    run_triple(n / 8);
    run_hash(n * 64);
  } else if (argc == 3 && strcmp(argv[1], "subsets") == 0) {
    run_subsets(strtoull(argv[2], NULL, 10));
  } else {
    fprintf(stderr, "usage: complexity_prog api | poly N | subsets N\n");
    return 2;
  }
  printf("%llu\n", (unsigned long long)sink);
  return 0;
}
