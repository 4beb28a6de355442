select service_id, version, spec_hash, synthesizer, synthesizer_version, module_hash, rounds,
       n_tools, n_verified, n_world_model, seed_state_hash
from {{ source('compoworld', 'services') }}
