cd /app
sed -i 's|counts\[word\]++|counts[strings.ToLower(word)]++|' wordfreq.go
