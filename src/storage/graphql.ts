// Registers the storage GraphQL types on the shared builder.
import "./cluster/graphql.js";
import "./svms/graphql.js";
import "./volumes/graphql.js";
import "./qtrees/graphql.js";
import "./quota-rules/graphql.js";
import "./quota-rules/mutations-graphql.js";
import "./quota-reports/graphql.js";
import "./jobs/graphql.js";
