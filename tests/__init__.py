"""gbm's tests: ``python -m tests.run_all`` (the README's test command)."""
