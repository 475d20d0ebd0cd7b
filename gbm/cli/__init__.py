"""The command line (``python -m gbm``: ``main``) and its demo (``demo``)."""
