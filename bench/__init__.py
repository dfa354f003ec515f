"""berth's benchmarks: each measure side by side with its baseline in the same run."""
