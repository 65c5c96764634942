"""The NFA^b runtime of SIGMOD 2008, section 5: runs, shared match buffer."""
