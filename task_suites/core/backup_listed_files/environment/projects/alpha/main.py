#!/usr/bin/env python3
from lib.util import greet

if __name__ == "__main__":
    print(greet("world"))
