#!/usr/bin/env python3
print("Content-Type: text/plain\n\nok")
