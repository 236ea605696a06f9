#!/bin/bash
echo first > /app/steps.log
