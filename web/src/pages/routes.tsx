import { Link, Route, Routes } from 'react-router';
import type { SessionInfo } from '../session';
import AccountPage from './account';
import { ListPage, ListsPage, SubscriberPage, SubscribersPage } from './audience';
import { AutomationEditorPage } from './automation-editor';
import { AutomationPage, AutomationRunPage, AutomationRunsPage, AutomationsPage } from './automations';
import { CampaignPage, CampaignRecipientsPage, CampaignsPage, NewCampaignPage } from './campaigns';
import { CapturedMessagePage, CapturedPage } from './captured';
import DeliverabilityPage from './deliverability';
import { DomainPage, DomainsPage } from './domains';
import KeysPage from './keys';
import { MessagePage, MessagesPage } from './messages';
import OverviewPage from './overview';
import { SegmentPage, SegmentsPage } from './segments';
import SuppressionPage from './suppression';
import { TemplatePage, TemplatesPage } from './templates';
import { WebhookPage, WebhooksPage } from './webhooks';

/** Every page has its own URL; the server answers each with the app, so a reload lands here again. */
export default function Pages({ session, onSessionChange }: { session: SessionInfo; onSessionChange: (s: Partial<SessionInfo>) => void }) {
  return (
    <Routes>
      <Route index element={<OverviewPage session={session} />} />
      <Route path="messages" element={<MessagesPage />} />
      <Route path="messages/:id" element={<MessagePage />} />
      <Route path="templates" element={<TemplatesPage />} />
      <Route path="templates/:id" element={<TemplatePage />} />
      <Route path="suppression" element={<SuppressionPage />} />
      <Route path="lists" element={<ListsPage />} />
      <Route path="lists/:id" element={<ListPage />} />
      <Route path="subscribers" element={<SubscribersPage />} />
      <Route path="subscribers/:id" element={<SubscriberPage />} />
      <Route path="segments" element={<SegmentsPage />} />
      <Route path="segments/:id" element={<SegmentPage />} />
      <Route path="campaigns" element={<CampaignsPage />} />
      <Route path="campaigns/new" element={<NewCampaignPage />} />
      <Route path="campaigns/:id" element={<CampaignPage />} />
      <Route path="campaigns/:id/recipients" element={<CampaignRecipientsPage />} />
      <Route path="automations" element={<AutomationsPage />} />
      <Route path="automations/new" element={<AutomationEditorPage />} />
      <Route path="automations/:id" element={<AutomationPage />} />
      <Route path="automations/:id/edit" element={<AutomationEditorPage />} />
      <Route path="automations/:id/runs" element={<AutomationRunsPage />} />
      <Route path="automations/:id/runs/:runId" element={<AutomationRunPage />} />
      <Route path="webhooks" element={<WebhooksPage />} />
      <Route path="webhooks/:id" element={<WebhookPage />} />
      <Route path="captured" element={<CapturedPage />} />
      <Route path="deliverability" element={<DeliverabilityPage />} />
      <Route path="captured/:id" element={<CapturedMessagePage />} />
      <Route path="settings/keys" element={<KeysPage />} />
      <Route path="settings/domains" element={<DomainsPage />} />
      <Route path="settings/domains/:id" element={<DomainPage development={session.delivery === 'capture'} />} />
      <Route path="settings/account" element={<AccountPage session={session} onSessionChange={onSessionChange} />} />
      <Route path="*" element={<><h1>Page not found</h1><p>There is no page at this address. <Link to="/">Go to the overview</Link>.</p></>} />
    </Routes>
  );
}
