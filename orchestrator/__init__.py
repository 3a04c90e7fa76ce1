"""The loop, the daemon, the watchdog, the command line, git and GitHub."""
