"""Shared code for the tool-calling course notebooks."""
