"""benchlab.store"""
