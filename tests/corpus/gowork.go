// A static Go program for the corpus test: goroutines on several threads, and what it sees
// of its own descriptors.
package main

import (
	"fmt"
	"os"
	"sort"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	sums := make([]int, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20000000; i++ {
				sums[w] += i % (w + 3)
			}
		}(w)
	}
	wg.Wait()
	sort.Ints(sums)
	fds, _ := os.ReadDir("/proc/self/fd")
	fmt.Println(sums, len(fds))
}
