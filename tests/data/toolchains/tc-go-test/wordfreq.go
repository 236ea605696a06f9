// Package wordfreq counts the words of a text.
package wordfreq

import "strings"

// Count returns how often each word occurs in text; words are compared without regard to case.
func Count(text string) map[string]int {
	counts := map[string]int{}
	for _, word := range strings.Fields(text) {
		counts[word]++
	}
	return counts
}
