"""A Kafka-protocol broker in Python (asyncio).

Standalone: this package never imports Django or anything from the control plane.
"""
