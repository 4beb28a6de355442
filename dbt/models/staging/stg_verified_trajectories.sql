-- criteria_json is kept (criterion pass rates read it); sample_json stays in the pipeline table.
select trajectory_id, task_id, round, split, replay_identical, rubric_score, passed,
       json_array_length(mismatches) as n_mismatches, criteria_json
from {{ source('compoworld', 'verified_trajectories') }}
