"""The stand-in tools as they run inside a sandbox: standard library only (packaging where guarded)."""
