#!/bin/bash
# Step convert's checks: the currency the agent set.
if grep -qx 'currency = EUR' /app/settings.ini; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
