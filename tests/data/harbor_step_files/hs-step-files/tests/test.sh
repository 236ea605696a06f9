#!/bin/bash
# Step total's checks (the task's own test.sh): the total of the price list step total brought, in its currency.
if [ "$(cat /app/report/total.txt 2>/dev/null)" = "42.50 EUR" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
