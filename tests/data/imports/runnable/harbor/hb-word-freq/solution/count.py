import collections
import re
import sys

words = re.findall(r"[A-Za-z]+", open(sys.argv[1]).read().lower())
for word, count in sorted(collections.Counter(words).items(), key=lambda kv: (-kv[1], kv[0])):
    print(word, count)
