#!/bin/sh
echo release
