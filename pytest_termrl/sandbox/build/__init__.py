"""The daemonless Dockerfile builder: BuildKit's parsing rules, each step run in a whole-machine sandbox, layers cached by digest."""
