"""benchlab.report"""
