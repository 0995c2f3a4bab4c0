"""IBIS-AMI models (placeholder: the lead's ``phy/ami/__init__.py`` replaces this)."""
