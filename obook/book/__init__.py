"""The opening book: coevolution rules (MBM, MVBM, usage rule), self-play of one individual, the
embedded build, seeding and export. Knows nothing of Celery or HTTP."""
