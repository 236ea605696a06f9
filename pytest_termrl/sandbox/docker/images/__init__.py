"""Images for the docker backend, built locally: the base image, task images, toolchain variants, the SDK client.

Nothing is imported here, so a module that only names an image tag needs no Docker SDK.
"""
