"""IBIS-AMI models in C for the tests, compiled at test time by :mod:`ami_models.build`."""
