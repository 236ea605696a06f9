#!/bin/bash
echo second >> /app/steps.log
