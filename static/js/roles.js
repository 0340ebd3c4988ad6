// What each role may write, as the server's route table says (`capledger routes`; a browser
// test compares this table with it, so the two cannot drift). Pages show a form only to the
// roles that may submit it; the server still enforces every permission itself.
export const WRITES = {
  'POST /compare': ['admin', 'owner', 'team', 'auditor'],
  'POST /compare/charts': ['admin', 'owner', 'team', 'auditor'],
  'POST /scenarios': ['owner', 'team'],
  'POST /scenarios/{id}/comparisons': ['owner', 'team'],
  'POST /workloads': ['owner', 'team'],
  'PATCH /workloads/{id}': ['owner', 'team'],
  'POST /offers': ['admin', 'owner'],
  'POST /offers/import': ['admin', 'owner'],
  'POST /benchmarks': ['owner', 'team'],
  'POST /benchmarks/import': ['owner', 'team'],
  'POST /benchmarks/{id}/telemetry': ['owner', 'team'],
  'POST /runs': ['owner', 'team'],
  'PUT /clusters/{name}': ['owner'],
  'POST /whatif': ['owner', 'team'],
  'PUT /workload-classes/{label}': ['owner'],
  'POST /reviews': ['owner'],
  'PATCH /reviews/{id}': ['owner'],
  'POST /reviews/{id}/artifacts': ['owner', 'team'],
  'PATCH /reviews/{id}/artifacts/{aid}': ['owner', 'team'],
  'POST /decisions': ['owner'],
  'PATCH /alerts/{id}': ['admin', 'owner'],
  'POST /alerts/sweep': ['admin', 'owner'],
  'POST /webhooks': ['admin', 'owner'],
  'DELETE /webhooks/{id}': ['admin', 'owner'],
  'POST /webhooks/{id}/ping': ['admin', 'owner'],
};

export function may(user, action) {
  const roles = WRITES[action];
  if (!roles) throw new Error(`unknown action ${action}`);
  return Boolean(user && roles.includes(user.role));
}

// The page each role starts on: where its work is.
export const LANDING = { owner: 'reviews', team: 'evidence', auditor: 'audit', admin: 'admin' };
