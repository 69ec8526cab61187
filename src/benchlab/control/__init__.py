"""benchlab.control"""
