"""Reports: the streamed episode log, the summary with bootstrap CIs, the terminal table."""

from .episodes import EpisodeLog, episode_key, read_episodes
from .summary import cluster_bootstrap_ci, format_table, summarize

__all__ = ["EpisodeLog", "cluster_bootstrap_ci", "episode_key", "format_table", "read_episodes", "summarize"]
