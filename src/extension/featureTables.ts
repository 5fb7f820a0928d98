/**
 * Every feature's part of the two tables `activate` registers: the command table and the conversation view's request
 * table. A feature folder exports `…Commands(services)` and `…Requests(services)`, each a slice; a command or a request
 * without a handler fails to compile here (`CommandTable`, `ConversationRequestTable` need every key).
 */
import type { CommandTable } from './core/commandTable';
import type { ConversationRequestTable } from './core/viewRequests';
import type { Services } from './services';
import { branchCommands } from './branches/branchCommands';
import { branchRequests } from './branches/branchRequests';
import { checkCommands } from './check/checkCommands';
import { codingAgentCommands } from './codingAgents/codingAgentCommands';
import { codingAgentRequests } from './codingAgents/codingAgentRequests';
import { compareCommands } from './compare/compareCommands';
import { compareRequests } from './compare/compareRequests';
import { contentCommands } from './content/contentCommands';
import { contentRequests } from './content/contentRequests';
import { contextRequests } from './context/contextRequests';
import { conversationCommands } from './conversation/conversationCommands';
import { conversationRequests } from './conversation/conversationRequests';
import { databaseCommands } from './databases/databaseCommands';
import { doctorCommands } from './doctor/doctorCommands';
import { guardCommands } from './guard/guardCommands';
import { layerRequests } from './guard/layerRequests';
import { remoteCommands } from './databases/remoteCommands';
import { replayRequests } from './replay/replayRequests';
import { pricingCommands } from './pricing/pricingCommands';
import { pricingRequests } from './pricing/pricingRequests';
import { datasetCommands } from './reviews/datasetCommands';
import { reviewQueueCommands } from './reviews/reviewQueueCommands';
import { reviewRequests } from './reviews/reviewRequests';
import { runCommands } from './runs/runCommands';
import { runRequests } from './runs/runRequests';
import { whatIfCommands } from './runs/whatIfCommands';
import { searchCommands } from './search/searchCommands';
import { searchRequests } from './search/searchRequests';
import { traceCommands } from './traces/traceCommands';
import { traceRequests } from './traces/traceRequests';
import { transferCommands } from './transfer/transferCommands';
import { transferRequests } from './transfer/transferRequests';

/** Every command the extension contributes, with its handler. */
export function commandTable(services: Services): CommandTable {
  return {
    ...databaseCommands(services),
    ...remoteCommands(services),
    ...branchCommands(services),
    ...conversationCommands(services),
    ...contentCommands(services),
    ...runCommands(services),
    ...whatIfCommands(services),
    ...compareCommands(services),
    ...pricingCommands(services),
    ...traceCommands(services),
    ...datasetCommands(services),
    ...reviewQueueCommands(services),
    ...searchCommands(services),
    ...transferCommands(services),
    ...codingAgentCommands(services),
    ...checkCommands(services),
    ...doctorCommands(services),
    ...guardCommands(services),
  };
}

/** Every request of the conversation view but its handshake, with the feature's handler that answers it. */
export function requestTable(services: Services): ConversationRequestTable {
  return {
    ...conversationRequests(services),
    ...branchRequests(services),
    ...traceRequests(services),
    ...contextRequests(services),
    ...reviewRequests(services),
    ...pricingRequests(services),
    ...runRequests(services),
    ...compareRequests(services),
    ...contentRequests(services),
    ...transferRequests(services),
    ...searchRequests(services),
    ...codingAgentRequests(services),
    ...replayRequests(services),
    ...layerRequests(services),
  };
}
