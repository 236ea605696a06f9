"""Reports: the streamed episode log, the summary with bootstrap CIs, the terminal table."""

from .episodes import EpisodeLog, read_episodes
from .record import episode_id, episode_key, key_of
from .summary import cluster_bootstrap_ci, format_table, summarize

__all__ = ["EpisodeLog", "cluster_bootstrap_ci", "episode_id", "episode_key", "format_table", "key_of", "read_episodes", "summarize"]
