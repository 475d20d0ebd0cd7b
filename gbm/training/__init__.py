"""The boosting loop ``train`` (``loop``) and the eval sets scored after every round
(``evaluation``)."""
