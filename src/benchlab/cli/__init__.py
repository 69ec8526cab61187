"""benchlab.cli"""
