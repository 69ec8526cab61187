"""benchlab.measure"""
