"""Hybrid recall: one fusion function shared by every engine and every API."""
