"""benchlab.machines"""
