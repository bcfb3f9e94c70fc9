/**
 * What GraphiQL (GET /graphql in a browser) opens with instead of its stock welcome text: the README's GraphQL
 * examples, one tab per operation, each with a line saying what it shows. They are the README's operations to
 * the letter (test/platform/graphiql.test.ts compares them), and the README's examples run in CI
 * (test/platform/readme-examples.test.ts), so what a newcomer runs first works. Ids in `<…>` are placeholders.
 */
export interface GraphiqlTab {
  query: string;
}

const tab = (what: string, operation: string): GraphiqlTab => ({ query: `# ${what}\n${operation.trim()}\n` });

export const GRAPHIQL_EXAMPLES: GraphiqlTab[] = [
  tab(
    "A project with its nodes, ports and links in one request (replace <project id>: query { projects(first: 20) { edges { node { id name } } } })",
    `query { project(id: "<project id>") { id projectId name status
  nodes(first: 100) { totalCount edges { node { id nodeId name nodeType status console ports { name shortName } } } }
  links(first: 100) { edges { node { id linkId capturing endpoints { node { name } adapterNumber portNumber } } } } } }`,
  ),
  tab(
    "Every started node, across all projects",
    `query { emulatedNodes(filter: { status: STARTED }, first: 100) {   # across all projects
  totalCount pageInfo { hasNextPage endCursor } edges { node { id name status project { name } } } } }`,
  ),
  tab(
    "Add a VPCS node to a project; the answer is the node or a typed error",
    `mutation { createNode(input: { projectId: "<project id>", name: "PC3", nodeType: VPCS }) {
  __typename ... on CreateNodePayload { node { id nodeId name console } } ... on Error { code message target } } }`,
  ),
  tab(
    "Start a node; the answer is the node with its new status (its id, or its GNS3 nodeId)",
    `mutation { startNode(input: { id: "<node id>" }) {   # the answer is the node, running: a cache updates its status
  __typename ... on StartNodePayload { node { id status console } } ... on Error { code message } } }`,
  ),
  tab(
    "Add a switch with its ports and VLANs: a node's settings are typed, one member per node type (only the fields given change on updateNode)",
    `mutation { createNode(input: { projectId: "<project id>", name: "SW1", nodeType: ETHERNET_SWITCH,   # typed settings: the node type's member
  settings: { ethernetSwitch: { ports: [{ portNumber: 0, name: "Uplink", type: DOT1Q, vlan: 1 }, { portNumber: 1, name: "Office", type: ACCESS, vlan: 10 }] } } }) {
  __typename ... on CreateNodePayload { node { id settings { ... on EthernetSwitchSettings { ports { portNumber name type vlan } } } } } ... on Error { code message } } }`,
  ),
  tab(
    "A project's changes, live; pass the last cursor seen as `after` to resume after a reconnect",
    `subscription { projectEvents(projectId: "<project id>", after: "<last cursor seen, or omit>") {
  ... on SubscriptionProjectEventsSuccess { data { cursor action
    ... on NodeEvent { kind changed node { id name status x y } }
    ... on LinkEvent { kind link { id suspend capturing } } } } } }`,
  ),
  tab(
    "Server-wide changes: projects, computes, templates, settings",
    `subscription { controllerEvents { ... on SubscriptionControllerEventsSuccess { data { cursor action payload } } } }`,
  ),
  tab(
    "Keep a local copy of a project in sync: read it with its eventCursor…",
    `query { project(id: "<project id>") { eventCursor nodes(first: 100) { edges { node { id name } } }
                                      links(first: 100) { edges { node { id endpoints { node { id name } } } } } } }`,
  ),
  tab(
    "…then follow its changes from that cursor (a ResyncEvent says to read it again)",
    `subscription { projectEvents(projectId: "<project id>", after: "<eventCursor>") {
  ... on SubscriptionProjectEventsSuccess { data { cursor action ... on ResyncEvent { reason }
    ... on LinkEvent { kind link { id endpoints { node { id name } } } } } } } }`,
  ),
  tab(
    "The frames crossing a link while its capture runs (startCapture), decoded",
    `subscription { linkPackets(id: "<link id>", after: "<last cursor seen, or omit>") {
  ... on LinkPacket { cursor number dropped time lengthBytes capturedLengthBytes
    ethernet { src dst etherType vlan } arp { operation senderMac senderIp targetMac targetIp }
    ipv4 { protocol src dst ttl } icmp { type code } tcp { srcPort dstPort flags } udp { srcPort dstPort } }
  ... on Error { __typename message } } }`,
  ),
  tab(
    "Storage: a user quota rule on a volume (try it with `npm run demo`)",
    `mutation {
  createQuotaRule(input: { svm: { name: "vs0" }, volume: { name: "vol1" }, type: USER, users: [{ name: "alice" }],
                           limits: { filesHardLimit: 100, spaceHardLimitBytes: 1048576 },
                           returnTimeoutSeconds: 30 }) {   # REST's return_timeout; 0 answers at once with the job QUEUED
    __typename
    ... on CreateQuotaRulePayload { quotaRule { id uuid type users { name id } spaceHardLimitBytes } job { id state } }
    ... on Error { message code ontapCode target }   # code: DUPLICATE_RULE, NOT_FOUND …; ontapCode: REST's number
  }
}`,
  ),
  tab(
    "Storage: quota rules filtered and sorted, a page at a time",
    `query {
  quotaRules(first: 20, filter: { svmName: { eq: "vs0" }, or: [{ filesHardLimit: { gt: 5 } }, { filesHardLimit: { isNull: true } }] },
             orderBy: [{ field: SPACE_HARD_LIMIT, direction: DESC }, { field: QTREE_NAME }]) {   # REST's order_by fields
    totalCount
    edges { node { id uuid type qtree { qtreeId name } users { name id } filesHardLimit volume { id name quotaState } } }
  }
}`,
  ),
  tab(
    "Storage: rule and volume-quota changes, live",
    `subscription {   # rule and volume-quota changes; pass the last \`cursor\` as \`after\` to resume after a reconnect
  quotaChanges(svm: { name: "vs0" }) { cursor kind ruleUuid changed rule { type spaceHardLimitBytes } volume { quotaState } }
}`,
  ),
];
