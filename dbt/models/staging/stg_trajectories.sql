-- trajectory_json (every message of the episode) stays in the pipeline table.
select trajectory_id, task_id, round, policy, rollout_idx, discover_mode, finish_reason, n_calls, n_messages,
       trajectory_hash
from {{ source('compoworld', 'trajectories') }}
