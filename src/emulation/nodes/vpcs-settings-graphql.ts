import { builder } from "../../platform/graphql/builder.js";
import { VPCS_STARTUP_SCRIPT } from "../runtime/vpcs.js";
import { gns3Names, usageOf, type SettingsKind } from "./settings-kind.js";

/**
 * A VPCS node's settings as typed fields (a member of `NodeSettings`) and the input that sets them
 * (`NodeSettingsInput.vpcs`). Its console is the node's own (`console`, `consoleType`); its startup script is a file
 * of the node (the node files operations read and write it).
 */
interface VpcsSettings {
  baseScriptFile: string | null;
  usage: string;
}

const VpcsSettingsRef = builder.objectRef<VpcsSettings>("VpcsSettings").implement({
  description: "The settings of a VPCS node (a Virtual PC Simulator)",
  fields: (t) => ({
    startupScriptFile: t.string({
      description: "The file of the node the PC runs when it starts (its startup script: address, gateway, name …)",
      resolve: () => VPCS_STARTUP_SCRIPT,
    }),
    baseScriptFile: t.exposeString("baseScriptFile", {
      nullable: true,
      description: "The base script a new node's startup script is made from (vpcs_base_config.txt); null on a node made with one, which has its own script since",
    }),
    usage: t.exposeString("usage", { description: "Free text on how to use the PC, shown to lab users" }),
  }),
});

const VpcsSettingsInput = builder.inputType("VpcsSettingsInput", {
  description: "Settings of a VPCS node; on a change only the fields given change",
  fields: (t) => ({
    baseScriptFile: t.string({
      description: "The base script a new node's startup script is made from: vpcs_base_config.txt (other names give no script); a node made already keeps its script",
    }),
    usage: t.string({ description: "Free text on how to use the PC, shown to lab users" }),
  }),
});

export const vpcsSettings: SettingsKind<VpcsSettings, typeof VpcsSettingsInput.$inferInput> = {
  member: "vpcs",
  shown: VpcsSettingsRef,
  read: (properties) => ({
    baseScriptFile: typeof properties.base_script_file === "string" ? properties.base_script_file : null,
    usage: usageOf(properties),
  }),
  given: VpcsSettingsInput,
  toProperties: (input) => gns3Names(input),
};
