#!/bin/sh
echo ledger
