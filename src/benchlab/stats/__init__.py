"""benchlab.stats"""
