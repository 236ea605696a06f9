#!/bin/sh
echo rotate
