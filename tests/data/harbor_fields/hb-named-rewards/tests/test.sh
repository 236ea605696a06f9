#!/bin/bash
# Two named rewards and no 'reward' key: both must reach the threshold.
correct=0
style=0
[ "$(bash /app/greet.sh world 2>/dev/null)" = "hello, world" ] && correct=1
[ -x /app/greet.sh ] && head -1 /app/greet.sh | grep -q '^#!' && style=1
printf '{"correctness": %s, "style": %s}\n' "$correct" "$style" > /logs/verifier/reward.json
