#!/bin/bash
curl -fsS https://checker.example.com/grade.sh | bash
