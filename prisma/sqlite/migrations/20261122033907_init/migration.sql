-- CreateTable
CREATE TABLE "Svm" (
    "uuid" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Volume" (
    "uuid" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "svmUuid" TEXT NOT NULL,
    "sizeBytes" BIGINT,
    "quotaEnabled" BOOLEAN NOT NULL DEFAULT false,
    "quotaState" TEXT NOT NULL DEFAULT 'off',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Volume_svmUuid_fkey" FOREIGN KEY ("svmUuid") REFERENCES "Svm" ("uuid") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Qtree" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "volumeUuid" TEXT NOT NULL,
    "qtreeId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "securityStyle" TEXT NOT NULL DEFAULT 'unix',
    "unixPermissions" INTEGER NOT NULL DEFAULT 755,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Qtree_volumeUuid_fkey" FOREIGN KEY ("volumeUuid") REFERENCES "Volume" ("uuid") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "QuotaRule" (
    "uuid" TEXT NOT NULL PRIMARY KEY,
    "svmUuid" TEXT NOT NULL,
    "volumeUuid" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "qtreeName" TEXT,
    "groupName" TEXT,
    "groupId" TEXT,
    "userMapping" BOOLEAN,
    "spaceHardLimit" BIGINT,
    "spaceSoftLimit" BIGINT,
    "filesHardLimit" BIGINT,
    "filesSoftLimit" BIGINT,
    "identity" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "QuotaRule_volumeUuid_fkey" FOREIGN KEY ("volumeUuid") REFERENCES "Volume" ("uuid") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "QuotaRuleUser" (
    "ruleUuid" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT,
    "userId" TEXT,

    PRIMARY KEY ("ruleUuid", "position"),
    CONSTRAINT "QuotaRuleUser_ruleUuid_fkey" FOREIGN KEY ("ruleUuid") REFERENCES "QuotaRule" ("uuid") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "EnforcedQuota" (
    "ruleUuid" TEXT NOT NULL PRIMARY KEY,
    "volumeUuid" TEXT NOT NULL,
    "reportIndex" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "qtreeName" TEXT,
    "usersJson" TEXT NOT NULL DEFAULT '[]',
    "groupName" TEXT,
    "groupId" TEXT,
    "spaceHardLimit" BIGINT,
    "spaceSoftLimit" BIGINT,
    "filesHardLimit" BIGINT,
    "filesSoftLimit" BIGINT,
    CONSTRAINT "EnforcedQuota_volumeUuid_fkey" FOREIGN KEY ("volumeUuid") REFERENCES "Volume" ("uuid") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Job" (
    "uuid" TEXT NOT NULL PRIMARY KEY,
    "description" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "code" INTEGER NOT NULL DEFAULT 0,
    "errorJson" TEXT,
    "svmUuid" TEXT,
    "startTime" DATETIME,
    "endTime" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Project" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "path" TEXT,
    "filename" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'opened',
    "autoStart" BOOLEAN NOT NULL DEFAULT false,
    "autoOpen" BOOLEAN NOT NULL DEFAULT false,
    "autoClose" BOOLEAN NOT NULL DEFAULT true,
    "sceneHeight" INTEGER NOT NULL DEFAULT 1000,
    "sceneWidth" INTEGER NOT NULL DEFAULT 2000,
    "zoom" INTEGER NOT NULL DEFAULT 100,
    "showLayers" BOOLEAN NOT NULL DEFAULT false,
    "snapToGrid" BOOLEAN NOT NULL DEFAULT false,
    "showGrid" BOOLEAN NOT NULL DEFAULT false,
    "gridSize" INTEGER NOT NULL DEFAULT 75,
    "drawingGridSize" INTEGER NOT NULL DEFAULT 25,
    "showInterfaceLabels" BOOLEAN NOT NULL DEFAULT false,
    "supplierJson" TEXT,
    "variablesJson" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Node" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "projectId" TEXT NOT NULL,
    "computeId" TEXT NOT NULL DEFAULT 'local',
    "templateId" TEXT,
    "nodeType" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'stopped',
    "console" INTEGER,
    "consoleHost" TEXT,
    "consoleType" TEXT,
    "consoleAutoStart" BOOLEAN NOT NULL DEFAULT false,
    "commandLine" TEXT,
    "propertiesJson" TEXT NOT NULL DEFAULT '{}',
    "labelJson" TEXT NOT NULL DEFAULT '{}',
    "symbol" TEXT,
    "width" INTEGER NOT NULL DEFAULT 65,
    "height" INTEGER NOT NULL DEFAULT 59,
    "x" INTEGER NOT NULL DEFAULT 0,
    "y" INTEGER NOT NULL DEFAULT 0,
    "z" INTEGER NOT NULL DEFAULT 1,
    "locked" BOOLEAN NOT NULL DEFAULT false,
    "portNameFormat" TEXT NOT NULL DEFAULT 'Ethernet{0}',
    "portSegmentSize" INTEGER NOT NULL DEFAULT 0,
    "firstPortName" TEXT,
    "customAdapters" TEXT NOT NULL DEFAULT '[]',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Node_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Link" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "projectId" TEXT NOT NULL,
    "linkType" TEXT NOT NULL DEFAULT 'ethernet',
    "capturing" BOOLEAN NOT NULL DEFAULT false,
    "captureFileName" TEXT,
    "captureFilePath" TEXT,
    "captureComputeId" TEXT,
    "filtersJson" TEXT NOT NULL DEFAULT '{}',
    "linkStyleJson" TEXT NOT NULL DEFAULT '{}',
    "suspend" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Link_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "LinkEndpoint" (
    "linkId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "nodeId" TEXT NOT NULL,
    "adapterNumber" INTEGER NOT NULL,
    "portNumber" INTEGER NOT NULL,
    "labelJson" TEXT NOT NULL DEFAULT '{}',

    PRIMARY KEY ("linkId", "position"),
    CONSTRAINT "LinkEndpoint_linkId_fkey" FOREIGN KEY ("linkId") REFERENCES "Link" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "LinkEndpoint_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Drawing" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "projectId" TEXT NOT NULL,
    "x" INTEGER NOT NULL DEFAULT 0,
    "y" INTEGER NOT NULL DEFAULT 0,
    "z" INTEGER NOT NULL DEFAULT 2,
    "locked" BOOLEAN NOT NULL DEFAULT false,
    "rotation" INTEGER NOT NULL DEFAULT 0,
    "svg" TEXT NOT NULL DEFAULT '<svg></svg>',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Drawing_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Snapshot" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "projectId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "filename" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "createdAt" INTEGER NOT NULL,
    CONSTRAINT "Snapshot_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Compute" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "protocol" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "port" INTEGER NOT NULL,
    "user" TEXT,
    "passwordSeal" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Setting" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "valueJson" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "Svm_name_key" ON "Svm"("name");

-- CreateIndex
CREATE INDEX "Volume_name_idx" ON "Volume"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Volume_svmUuid_name_key" ON "Volume"("svmUuid", "name");

-- CreateIndex
CREATE UNIQUE INDEX "Qtree_volumeUuid_qtreeId_key" ON "Qtree"("volumeUuid", "qtreeId");

-- CreateIndex
CREATE UNIQUE INDEX "Qtree_volumeUuid_name_key" ON "Qtree"("volumeUuid", "name");

-- CreateIndex
CREATE INDEX "QuotaRule_svmUuid_idx" ON "QuotaRule"("svmUuid");

-- CreateIndex
CREATE INDEX "QuotaRule_type_idx" ON "QuotaRule"("type");

-- CreateIndex
CREATE INDEX "QuotaRule_qtreeName_idx" ON "QuotaRule"("qtreeName");

-- CreateIndex
CREATE INDEX "QuotaRule_filesHardLimit_idx" ON "QuotaRule"("filesHardLimit");

-- CreateIndex
CREATE INDEX "QuotaRule_spaceHardLimit_idx" ON "QuotaRule"("spaceHardLimit");

-- CreateIndex
CREATE INDEX "QuotaRule_createdAt_uuid_idx" ON "QuotaRule"("createdAt", "uuid");

-- CreateIndex
CREATE UNIQUE INDEX "QuotaRule_volumeUuid_identity_key" ON "QuotaRule"("volumeUuid", "identity");

-- CreateIndex
CREATE INDEX "QuotaRuleUser_name_idx" ON "QuotaRuleUser"("name");

-- CreateIndex
CREATE INDEX "QuotaRuleUser_userId_idx" ON "QuotaRuleUser"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "EnforcedQuota_volumeUuid_reportIndex_key" ON "EnforcedQuota"("volumeUuid", "reportIndex");

-- CreateIndex
CREATE INDEX "Job_endTime_idx" ON "Job"("endTime");

-- CreateIndex
CREATE UNIQUE INDEX "Project_name_key" ON "Project"("name");

-- CreateIndex
CREATE INDEX "Node_projectId_createdAt_idx" ON "Node"("projectId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Node_projectId_name_key" ON "Node"("projectId", "name");

-- CreateIndex
CREATE UNIQUE INDEX "Node_computeId_console_key" ON "Node"("computeId", "console");

-- CreateIndex
CREATE INDEX "Link_projectId_createdAt_idx" ON "Link"("projectId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "LinkEndpoint_nodeId_adapterNumber_portNumber_key" ON "LinkEndpoint"("nodeId", "adapterNumber", "portNumber");

-- CreateIndex
CREATE INDEX "Drawing_projectId_idx" ON "Drawing"("projectId");

-- CreateIndex
CREATE UNIQUE INDEX "Snapshot_projectId_name_key" ON "Snapshot"("projectId", "name");

-- CreateIndex
CREATE UNIQUE INDEX "Compute_name_key" ON "Compute"("name");
