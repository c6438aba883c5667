"""What attnio gives a user's own test suite: the pytest plugin (:mod:`attnio.testing.pytest_plugin`)."""
