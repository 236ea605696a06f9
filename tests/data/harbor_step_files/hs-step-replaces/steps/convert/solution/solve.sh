#!/bin/bash
sed -i 's/^currency = USD$/currency = EUR/' /app/settings.ini
